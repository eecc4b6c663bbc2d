/** Text that JSON.stringify writes as it is, in quotes: printable ASCII without `"` and `\`. */
export const NOTHING_TO_ESCAPE = /^[\x20\x21\x23-\x5b\x5d-\x7e]*$/;
