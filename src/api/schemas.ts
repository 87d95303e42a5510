import { Type } from '@sinclair/typebox';
import { StringEnum } from '../schemas/common.js';
import { codesOfStatus } from './errors.js';

export { Nullable, StringEnum, Timestamp } from '../schemas/common.js';

const Detail = Type.String({ description: 'What went wrong, in words a person can act on' });

/**
 * The body of an error answer with this status: `{"detail","code", ...}`, `code` one of the codes
 * STATUS_OF_CODE gives this status. A 401 is only `{"detail"}`.
 */
export function errorBody(status: number, description: string) {
  if (status === 401) return Type.Object({ detail: Detail }, { additionalProperties: false, description });
  const code = StringEnum(codesOfStatus(status), {
    description: 'Stable error code, safe to match on (the `detail` may be reworded); README.md lists what each means',
  });
  return Type.Object({ detail: Detail, code }, { additionalProperties: true, description });
}

export const Id = Type.Integer({ minimum: 1, maximum: 2_147_483_647 });

/** `limit` 1–1000 (default 100) and `offset` ≥ 0; the total count is in `X-Total-Count`. */
export function pagingQuery(defaultLimit = 100) {
  return {
    limit: Type.Optional(
      Type.Integer({ minimum: 1, maximum: 1000, default: defaultLimit, description: `Page size, 1–1000 (default ${defaultLimit})` }),
    ),
    offset: Type.Optional(Type.Integer({ minimum: 0, maximum: 1_000_000_000, default: 0, description: 'Items to skip' })),
  };
}

/** Description of a paged JSON-array response. */
export const PAGED = 'A JSON array; the `X-Total-Count` header holds the number of items matching the filters, ignoring limit and offset.';

/** Error responses shared by authenticated routes, for the OpenAPI document. */
export function errorResponses(...statuses: number[]) {
  const descriptions: Record<number, string> = {
    400: 'Invalid parameter or body; `detail` names it',
    401: 'Not authenticated: `{"detail":"Not authenticated"}`',
    403: 'Authenticated but not allowed',
    404: 'Not found',
    409: 'Conflict',
    413: 'Body larger than 1 MiB',
    415: 'Body is not JSON',
    429: 'Too many attempts; see Retry-After',
    503: 'Service unavailable',
  };
  return Object.fromEntries(statuses.map((s) => [s, errorBody(s, descriptions[s])]));
}
