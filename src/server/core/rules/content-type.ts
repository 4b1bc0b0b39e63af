// The content type of an attachment sent without one, from its file name: nodemailer's own table, so the type stored
// is the one nodemailer's composer would have given it. The one reach into nodemailer from core, kept here:
// `nodemailer/lib/mime-funcs` is a subpath nodemailer's package.json exports, with type declarations, but documents
// nowhere (hence nodemailer's exact pin in package.json). Loaded by the first attachment without a content type, not
// with the server.
import { createRequire } from 'node:module';

const require = createRequire(import.meta.url);

/** The content type of a file called `filename` (application/octet-stream when its extension is unknown). */
export const contentTypeOf = (filename: string): string =>
  (require('nodemailer/lib/mime-funcs') as typeof import('nodemailer/lib/mime-funcs')).detectMimeType(filename);
