import type * as t from 'io-ts';

const VALUE_LIMIT = 60;

function show(value: unknown): string {
  if (value === undefined) return 'nothing';
  const text = JSON.stringify(value) ?? String(value);
  return text.length > VALUE_LIMIT ? `${text.slice(0, VALUE_LIMIT)}…` : text;
}

/**
 * `at "args": expected UnknownRecord, got "x"` for each failing field. Keys
 * that io-ts adds for the members of an intersection or union are dropped:
 * they name no field of the event.
 */
export function formatValidationErrors(errors: t.Errors): string {
  return errors
    .map(({ context, value }) => {
      const path: string[] = [];
      for (let i = 1; i < context.length; i++) {
        const parent = context[i - 1]!.type as { _tag?: string };
        if (parent._tag !== 'IntersectionType' && parent._tag !== 'UnionType') path.push(context[i]!.key);
      }
      const expected = context[context.length - 1]!.type.name;
      return `${path.length ? `at "${path.join('.')}"` : 'event'}: expected ${expected}, got ${show(value)}`;
    })
    .join('; ');
}
