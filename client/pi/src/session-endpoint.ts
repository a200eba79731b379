// One handoff parent endpoint per Pi session, shared by every handoff extension loaded in it.
//
// Pi loads each extension with its own module graph (jiti, `moduleCache: false`), so two of our
// extensions in one session (the default one and the pi-subagents bridge) cannot share a module
// variable. What they do share is the session's event bus (`pi.events`): one bus per extension
// runtime, which is one session. The first extension to ask creates the adapter and answers
// `ENDPOINT_CHANNEL` on that bus from then on; a later one asks there at load time and reuses
// the answer. Emitting on the bus calls its handlers synchronously, so the answer is there when
// `emit` returns. Another session has another bus and so its own endpoint.
import type { ExtensionAPI } from "@earendil-works/pi-coding-agent";

import type { HandoffAdapter } from "./pi-adapter.js";

/** The bus channel the owner of a session's endpoint answers on. */
export const ENDPOINT_CHANNEL = "handoff:session-endpoint";

/** The question asked on ENDPOINT_CHANNEL: the owner fills in `adapter`. */
interface EndpointQuery {
  adapter?: HandoffAdapter;
}

/**
 * The session's adapter: the one another handoff extension in this session already created, or
 * a new one from `create` (then this caller owns it and answers later callers).
 */
export function sessionAdapter(pi: Pick<ExtensionAPI, "events">, create: () => HandoffAdapter): HandoffAdapter {
  const query: EndpointQuery = {};
  pi.events.emit(ENDPOINT_CHANNEL, query);
  if (query.adapter !== undefined) return query.adapter;
  const adapter = create();
  pi.events.on(ENDPOINT_CHANNEL, (data) => {
    const asked = data as EndpointQuery | undefined;
    if (asked !== undefined && typeof asked === "object" && asked.adapter === undefined) asked.adapter = adapter;
  });
  return adapter;
}
