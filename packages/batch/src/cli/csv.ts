// A small RFC 4180 reader: comma-separated, double quotes around fields that hold commas, quotes
// ("" inside) or line breaks; CRLF or LF. Enough for an export of charges; no dependency.

/** One record of the file and the line it starts on (1-based, for error messages). */
export interface CsvRecord {
  line: number;
  fields: string[];
}

export function parseCsv(text: string): CsvRecord[] {
  const records: CsvRecord[] = [];
  let fields: string[] = [];
  let field = "";
  let quoted = false;
  let line = 1;
  let recordLine = 1;
  let i = text.charCodeAt(0) === 0xfeff ? 1 : 0; // a byte-order mark is not part of the header
  const endRecord = () => {
    fields.push(field);
    // A blank line is no record.
    if (!(fields.length === 1 && fields[0] === "")) records.push({ line: recordLine, fields });
    fields = [];
    field = "";
  };
  for (; i < text.length; i++) {
    const char = text[i]!;
    if (quoted) {
      if (char === '"') {
        if (text[i + 1] === '"') {
          field += '"';
          i++;
        } else {
          quoted = false;
        }
      } else {
        if (char === "\n") line++;
        field += char;
      }
      continue;
    }
    if (char === '"' && field === "") {
      quoted = true;
    } else if (char === ",") {
      fields.push(field);
      field = "";
    } else if (char === "\n" || char === "\r") {
      if (char === "\r" && text[i + 1] === "\n") i++;
      endRecord();
      line++;
      recordLine = line;
    } else {
      field += char;
    }
  }
  if (quoted) throw new InputError(`line ${recordLine}: a quoted field is not closed`);
  if (field !== "" || fields.length > 0) endRecord();
  return records;
}

/** Bad input: the message names the line and the field; nothing was sent. */
export class InputError extends Error {
  constructor(message: string) {
    super(message);
    this.name = "InputError";
  }
}
