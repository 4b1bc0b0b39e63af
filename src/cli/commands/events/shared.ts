import { UsageError } from '../../errors.js';

/**
 * Event types as given to a flag, checked against the list of event types (docs/api.md#events) before anything is
 * sent (a typo is a usage error).
 */
export async function checkEventTypes(
  flag: string,
  types: readonly string[] | undefined,
): Promise<string[] | undefined> {
  if (!types?.length) return undefined;
  const { EVENT_TYPES } = await import('../../../contract/events.js');
  const known: readonly string[] = EVENT_TYPES;
  const unknown = types.filter((t) => !known.includes(t));
  if (unknown.length) {
    throw new UsageError(
      `${flag}: unknown event type ${unknown.map((t) => `"${t}"`).join(', ')}`,
      `the types are ${known.join(', ')}`,
    );
  }
  return [...new Set(types)];
}
