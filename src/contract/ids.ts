// The form of a resource id, shared by the schemas that check ids and the server that makes them.

/** How many base62 characters follow the prefix of a resource id (`msg_` + 24). */
export const ID_CHARS = 24;

/** How many base62 characters follow an API key's prefix (`svc_test_` + 32). */
export const KEY_CHARS = 32;

/** An API key as the service makes them: `svc_test_` or `svc_live_`, then KEY_CHARS base62 characters. */
export const API_KEY_PATTERN = /^svc_(test|live)_[0-9A-Za-z]{32}$/;

/** A JWT (three base64url parts), the form of a session's access token, which an operation taking a key refuses. */
export const ACCESS_TOKEN_PATTERN = /^[\w-]+\.[\w-]+\.[\w-]+$/;
