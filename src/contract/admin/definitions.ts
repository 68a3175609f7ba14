import { type Static, Type } from 'typebox';
import { Choice, IdParams, NoContent, OneOf } from '../common.js';
import { FIELD_TYPES } from '../constants.js';

/** Custom fields and KPIs of the account (docs/admin-api.md, Custom fields and KPIs). */

export const FieldTypeSchema = OneOf(FIELD_TYPES);
export type { FieldType } from '../constants.js';

export const CustomFieldItem = Type.Object({ id: Type.String(), name: Type.String(), type: FieldTypeSchema });
export type CustomField = Static<typeof CustomFieldItem>;

/** `GET /fields`: by name. */
export const CustomFieldList = Type.Object({ items: Type.Array(CustomFieldItem) });
export type CustomFieldListBody = Static<typeof CustomFieldList>;

/** A wrong type keeps the message the CLI (through the service) gives: `type must be one of string, number, …` at /type. */
export const CustomFieldBody = Type.Object(
  { name: Type.String(), type: Choice(FIELD_TYPES, `type must be one of ${FIELD_TYPES.join(', ')}`) },
  { additionalProperties: false },
);
export type CustomFieldInput = Static<typeof CustomFieldBody>;

export const KpiItem = Type.Object({ id: Type.String(), name: Type.String() });
export type Kpi = Static<typeof KpiItem>;

/** `GET /kpis`: by id. */
export const KpiList = Type.Object({ items: Type.Array(KpiItem) });
export type KpiListBody = Static<typeof KpiList>;

export const KpiBody = Type.Object({ id: Type.String(), name: Type.String() }, { additionalProperties: false });
export type KpiInput = Static<typeof KpiBody>;

/** `PATCH /fields/:id`, `PATCH /kpis/:id`: the new name (a field's type and a KPI's id never change). */
export const RenameBody = Type.Object({ name: Type.String() }, { additionalProperties: false });
export type RenameInput = Static<typeof RenameBody>;

/** `DELETE /fields/:id`, `DELETE /kpis/:id`: 204, no body. */
export { IdParams as DefinitionParams, NoContent as DefinitionDeleted };
