// The package's Pi extension (the default export Pi loads, `pi.extensions` in package.json): the
// session becomes a handoff parent and the model gets the subagent tools.
//
// This module imports Pi's runtime modules (`typebox`, `@earendil-works/pi-tui`), which Pi provides
// to the extensions it loads; the client (index.ts) and the adapter (pi-adapter.ts) do not.
import type { ExtensionAPI } from "@earendil-works/pi-coding-agent";

import { createHandoffAdapter, type HandoffAdapterOptions, type HandoffMessageDetails } from "./pi-adapter.js";
import { currentRuntime } from "./pi-launch.js";
import { batchMessageRenderer } from "./render.js";
import { sessionAdapter } from "./session-endpoint.js";
import { resolveSubagentOptions, SUBAGENT_CHILD_ENV, type SubagentOptions } from "./subagent-options.js";
import { registerSubagentTools } from "./subagent-tools.js";
import { Subagents } from "./subagents.js";

/**
 * The Pi extension: the session becomes a handoff parent (usage answers, idle/busy, deliveries)
 * and the model gets the subagent tools (subagent_spawn, _send, _wait, _check, _cancel, _list),
 * whose children are child Pi processes whose conversations subagent_send continues. Delivered batches render as one line per child. Other subagent
 * extensions that report their own children use createHandoffAdapter instead.
 */
export default function handoffExtension(pi: ExtensionAPI, options: HandoffAdapterOptions & { subagents?: SubagentOptions } = {}): void {
  // A child Pi of subagent_spawn: it runs one prompt in JSON mode and exits, which would end any
  // subagent of its own; so it gets no tools and is no handoff parent (see SUBAGENT_CHILD_ENV).
  if (process.env[SUBAGENT_CHILD_ENV] === "1") return;
  const { subagents: subagentOptions, ...adapterOptions } = options;
  const resolved = resolveSubagentOptions(subagentOptions);
  // One endpoint per session, shared with the pi-subagents bridge when it is loaded too.
  const adapter = sessionAdapter(pi, () => createHandoffAdapter(pi, adapterOptions));
  const subagents = new Subagents(adapter, resolved, currentRuntime());
  // Children are cancelled at handoffd before the adapter closes, whichever extension loaded first.
  adapter.beforeClose(() => subagents.shutdown());
  const customType = adapterOptions.customType ?? "handoff";
  pi.on("message_end", (event) => {
    const message = event.message as { role?: string; customType?: string; details?: unknown };
    if (message.role === "custom" && message.customType === customType && isBatchDetails(message.details)) subagents.onDelivered(message.details);
  });
  pi.on("agent_settled", (_event, ctx) => subagents.setContext({ cwd: ctx.cwd, model: ctx.model, hasUI: ctx.hasUI, ui: ctx.ui }));
  registerSubagentTools(pi, subagents);
  pi.registerMessageRenderer(customType, batchMessageRenderer);
}

function isBatchDetails(details: unknown): details is HandoffMessageDetails {
  return typeof details === "object" && details !== null && Array.isArray((details as { sections?: unknown }).sections);
}
