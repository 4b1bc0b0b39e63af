// The form of a resource id, shared by the schemas that check ids and the server that makes them.

/** How many base62 characters follow the prefix of a resource id (`msg_` + 24). */
export const ID_CHARS = 24;
