import { createUser, ROLES, type Role } from '../../modules/users/users.service.js';
import { type CommandGroup, optionalString, required, UsageError } from '../command.js';

export const user: CommandGroup = {
  create: {
    options: { account: { type: 'string' }, email: { type: 'string' }, password: { type: 'string' }, role: { type: 'string' } },
    run: ({ db }, v) => {
      const role = optionalString(v, 'role');
      if (role !== undefined && !(ROLES as readonly string[]).includes(role))
        throw new UsageError(`--role must be admin or member, got '${role}'`);
      return createUser(db, required(v, 'account'), {
        email: required(v, 'email'),
        password: required(v, 'password'),
        role: role as Role | undefined,
      });
    },
  },
};
