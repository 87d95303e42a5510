import { sql, type Kysely } from 'kysely';

/**
 * Kysely's migrator checks whether its tables exist by listing the tables of every schema in the
 * database; a schema another process drops meanwhile makes that listing fail ("schema … does not
 * exist"). This gives it a listing of our schema only; everything else goes to `db` itself.
 */
export function withSchemaIntrospection(db: Kysely<unknown>, schema: string): Kysely<unknown> {
  const introspection = {
    getSchemas: () => db.introspection.getSchemas(),
    async getTables() {
      const { rows } = await sql<{ name: string }>`
        select c.relname as name from pg_catalog.pg_class c join pg_catalog.pg_namespace n on n.oid = c.relnamespace
        where n.nspname = ${schema} and c.relkind in ('r', 'p')`.execute(db);
      return rows.map((r) => ({ name: r.name, schema, isView: false, columns: [] }));
    },
    async getMetadata() {
      return { tables: await this.getTables() };
    },
  };
  return new Proxy(db, {
    get(target, property) {
      if (property === 'introspection') return introspection;
      const value: unknown = Reflect.get(target, property);
      // Kysely's methods use private fields: they must run on the real instance.
      return typeof value === 'function' ? (value as (...args: unknown[]) => unknown).bind(target) : value;
    },
  });
}
