// forge's ASN.1 module loaded alone from its file (tls.ts): the very object `require('node-forge').asn1` is, so it has
// the types @types/node-forge gives that one.
declare module 'node-forge/lib/asn1.js' {
  import type forge from 'node-forge';
  const asn1: typeof forge.asn1;
  export = asn1;
}
