import { createField, createKpi } from '../../modules/definitions/definitions.service.js';
import { type CommandGroup, required } from '../command.js';

export const field: CommandGroup = {
  create: {
    options: { account: { type: 'string' }, name: { type: 'string' }, type: { type: 'string' } },
    run: async ({ db }, v) => {
      const created = await createField(db, required(v, 'account'), { name: required(v, 'name'), type: required(v, 'type') });
      return { name: created.name, type: created.type };
    },
  },
};

export const kpi: CommandGroup = {
  create: {
    options: { account: { type: 'string' }, id: { type: 'string' }, name: { type: 'string' } },
    run: ({ db }, v) => createKpi(db, required(v, 'account'), { id: required(v, 'id'), name: required(v, 'name') }),
  },
};
