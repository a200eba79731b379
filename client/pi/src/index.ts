// @handoff/pi: a typed handoffd client and the Pi extension adapter.
export { HandoffClient, WAIT_GRACE_MS } from "./client.js";
export type { CallOptions, ClientEvent, HandoffClientOptions, ReconnectOptions } from "./client.js";
export { autostartFromEnvironment } from "./daemon-start.js";
export type { AutostartOptions } from "./daemon-start.js";
export { HandoffError } from "./errors.js";
export type { HandoffErrorKind } from "./errors.js";
export { DEFAULT_MAX_FRAME_BYTES } from "./framing.js";
// The Pi extension with the subagent tools is `@handoff/pi/pi` (extension.ts): it needs Pi's runtime.
export { createHandoffAdapter } from "./pi-adapter.js";
export type {
  DeliveryEvent,
  HandoffAdapter,
  HandoffAdapterOptions,
  HandoffMessageDetails,
  PiApi,
  PiContext,
  SubagentCompletion,
} from "./pi-adapter.js";
export * from "./protocol.js";
export { clientSocketLocation, daemonSocketLocation, defaultSocketPath, type SocketLocation, type SocketSource } from "./socket-path.js";
export { methods } from "./methods.js";
export type { Direction, MethodType, NotificationType, RequestType } from "./methods.js";
export { WireError } from "./wire.js";
