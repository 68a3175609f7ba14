/**
 * Herald's module rules, checked by dependency-cruiser (`npm run check:deps`, part of `npm run lint`).
 * docs/architecture.md explains each rule and where new code goes.
 *
 * Type-only imports (`import type ...`) are told apart from run-time ones (tsPreCompilationDeps), so a
 * rule can allow a type and still forbid the code: the panel may import the contract's types, but at
 * run time only src/contract/constants.ts.
 * @type {import('dependency-cruiser').IConfiguration}
 */
module.exports = {
  forbidden: [
    {
      name: 'no-circular',
      severity: 'error',
      comment: 'No import cycles, type-only ones included (a cycle is two modules that are really one, or a missing third).',
      from: {},
      to: { circular: true },
    },
    {
      name: 'sql-only-in-repositories',
      severity: 'error',
      comment:
        'SQL (Kysely query builder, sql templates) lives only in *.repo.ts files and src/db/ (connection, transaction, migrations). ' +
        'Services hold the rules and take a Queryable from src/db/queryable.ts. Type-only imports of kysely are allowed.',
      from: { path: '^src/', pathNot: ['^src/db/', '[.]repo[.]ts$'] },
      to: { path: 'node_modules/kysely/', dependencyTypesNot: ['type-only'] },
    },
    {
      name: 'database-drivers-only-in-db',
      severity: 'error',
      comment: 'Only src/db/ opens connections: the drivers (better-sqlite3, pg) are imported nowhere else.',
      from: { path: '^src/', pathNot: '^src/db/' },
      to: { path: 'node_modules/(better-sqlite3|pg|pg-[^/]+)/', dependencyTypesNot: ['type-only'] },
    },
    {
      name: 'no-other-modules-repo',
      severity: 'error',
      comment: "A module uses another module through that module's service, never its repository.",
      from: { path: '^src/modules/([^/]+)/' },
      to: { path: '^src/modules/[^/]+/.*[.]repo[.]ts$', pathNot: '^src/modules/$1/' },
    },
    {
      name: 'services-without-http',
      severity: 'error',
      comment: 'Services hold the rules: no Fastify (routes translate HTTP to service calls and back).',
      from: { path: '[.]service[.]ts$' },
      to: { path: 'node_modules/(fastify|@fastify/[^/]+)/', dependencyTypesNot: ['type-only'] },
    },
    {
      name: 'dispatcher-is-private',
      severity: 'error',
      comment:
        'The dispatcher is a process, not a library: only the composition root (src/herald.ts) starts it. Rendering, channels and ' +
        'the job runner live outside it so that the admin preview, the outbox and the test send do not import the dispatcher.',
      from: { path: '^src/', pathNot: ['^src/dispatcher/', '^src/herald[.]ts$'] },
      to: { path: '^src/dispatcher/' },
    },
    {
      name: 'channel-folders-behind-the-registry',
      severity: 'error',
      comment:
        'A channel (src/channels/<channel>/) is reached through the registry (src/channels/registry.ts), so adding one is one folder ' +
        'and one registry entry; nothing outside src/channels/ imports a channel folder.',
      from: { path: '^src/', pathNot: '^src/channels/' },
      to: { path: '^src/channels/[^/]+/' },
    },
    {
      name: 'rendering-does-no-io',
      severity: 'error',
      comment:
        'Rendering (src/rendering/) turns a campaign and a contact into a message and nothing else: shared by the transports, the ' +
        'outbox view and the admin preview, it reads no database and sends nothing.',
      from: { path: '^src/rendering/' },
      to: {
        path: [
          '^src/(dispatcher|jobs|webhooks|db)/',
          '^src/channels/[^/]+/',
          '[.]repo[.]ts$',
          'node_modules/(kysely|pg|better-sqlite3|nodemailer)/',
        ],
        dependencyTypesNot: ['type-only'],
      },
    },
    {
      name: 'job-runner-knows-no-queue',
      severity: 'error',
      comment: 'The job runner (src/jobs/) is generic: the sends and the webhook deliveries plug their queues into it, not the reverse.',
      from: { path: '^src/jobs/' },
      to: { path: '^src/(modules|dispatcher|webhooks|channels|rendering|http)/' },
    },
    {
      name: 'app-only-from-composition-root',
      severity: 'error',
      comment: 'src/app.ts builds the app; route plugins take AppDeps from src/deps.ts, never from app.ts.',
      from: { path: '^src/', pathNot: '^src/herald[.]ts$' },
      to: { path: '^src/app[.]ts$' },
    },
    {
      name: 'panel-imports-only-the-contract',
      severity: 'error',
      comment: 'The admin panel (src/admin-ui/) imports nothing of the server but src/contract/.',
      from: { path: '^src/admin-ui/' },
      to: { path: '^src/', pathNot: ['^src/admin-ui/', '^src/contract/'] },
    },
    {
      name: 'panel-runtime-only-contract-constants',
      severity: 'error',
      comment:
        'At run time the panel imports only src/contract/constants.ts; the schemas are imported as types (no TypeBox in the bundle).',
      from: { path: '^src/admin-ui/' },
      to: { path: '^src/contract/', pathNot: '^src/contract/constants[.]ts$', dependencyTypesNot: ['type-only'] },
    },
    {
      name: 'panel-no-typebox-at-runtime',
      severity: 'error',
      comment: 'The panel bundle carries no TypeBox: it imports schemas as types only.',
      from: { path: '^src/admin-ui/' },
      to: { path: 'node_modules/(typebox|@sinclair/typebox)/', dependencyTypesNot: ['type-only'] },
    },
    {
      name: 'contract-stands-alone',
      severity: 'error',
      comment: 'src/contract/ is shared with the panel: it imports only itself and TypeBox, never server code.',
      from: { path: '^src/contract/' },
      to: { path: '^src/', pathNot: '^src/contract/' },
    },
    {
      name: 'contract-constants-import-nothing',
      severity: 'error',
      comment: 'src/contract/constants.ts is bundled into the panel as is: it imports nothing.',
      from: { path: '^src/contract/constants[.]ts$' },
      to: {},
    },
    {
      name: 'not-to-dev-dependency',
      severity: 'error',
      comment:
        'Shipped code (src/, but not the panel, which vite bundles) may not import a devDependency: `npm ci --omit=dev` would break it.',
      from: { path: '^src/', pathNot: '^src/admin-ui/' },
      to: { dependencyTypes: ['npm-dev'], dependencyTypesNot: ['type-only'] },
    },
    {
      name: 'client-is-standalone',
      severity: 'error',
      comment:
        'The TypeScript client (client/) is built from the OpenAPI document alone: it imports nothing of the server, so it can be ' +
        'shipped on its own and its types only change through `npm run client:generate`.',
      from: { path: '^client/' },
      to: { path: '^(src|test|tools|bench)/' },
    },
    {
      name: 'client-runs-anywhere',
      severity: 'error',
      comment:
        "The client runs wherever fetch does (Node, Deno, Bun, browsers' back-end frameworks): no Node built-ins, and no package but openapi-fetch.",
      from: { path: '^client/' },
      to: {
        pathNot: ['^client/', 'node_modules/openapi-fetch/', 'node_modules/openapi-typescript-helpers/'],
        dependencyTypesNot: ['type-only'],
      },
    },
  ],
  options: {
    // Only the source: tests and benchmarks may reach anywhere to set up their case.
    doNotFollow: { path: 'node_modules' },
    exclude: { path: '(^|/)dist/' },
    // Node built-ins (`crypto`, `node:fs`) are kept in the graph so that client-runs-anywhere sees them.
    includeOnly: '(^src/|^client/|node_modules/|^(node:)?[a-z_]+$)',
    tsPreCompilationDeps: true,
    tsConfig: { fileName: 'tsconfig.json' },
    enhancedResolveOptions: {
      exportsFields: ['exports'],
      conditionNames: ['import', 'require', 'node', 'default', 'types'],
      mainFields: ['module', 'main', 'types', 'typings'],
      extensions: ['.ts', '.tsx', '.js', '.mjs', '.cjs', '.json'],
    },
    reporterOptions: {
      text: { highlightFocused: true },
    },
  },
};
