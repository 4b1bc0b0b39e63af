import { SERVICE_VERSION } from '../../contract/common.js';
import { newId } from '../../lib/ids.js';
import type { Changes } from '../../lib/changes.js';
import type { Clock } from '../../lib/clock.js';
import type { EventStore } from '../store/events.js';

/** Raises events into the outbox. Call inside the transaction of the change that caused them. */
export function createEvents(deps: { store: EventStore; clock: Clock; changes: Changes }) {
  return {
    emit(workspaceId: string, type: string, data: Record<string, unknown>, messageId: string | null = null): string {
      const id = newId('evt');
      deps.store.insert({
        id, workspace_id: workspaceId, type, message_id: messageId, data: JSON.stringify(data), api_version: SERVICE_VERSION,
        created_at: deps.clock.now(),
      });
      deps.changes.notify(`events:${workspaceId}`);
      deps.changes.notify('events');
      return id;
    },
  };
}
export type Events = ReturnType<typeof createEvents>;
