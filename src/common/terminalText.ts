// Text from the stream is untrusted: the agent runs code, and its output,
// tool results and stderr can carry terminal control sequences that write the
// clipboard (OSC 52), clear the screen or hide what follows. Nothing that
// prints it may let a terminal interpret one.

/** Well-formed escape sequences: CSI (`ESC [ … final`), OSC/DCS/APC/PM/SOS strings up to BEL or ST, and two-byte escapes. */
const SEQUENCE =
  // eslint-disable-next-line no-control-regex
  /\u001b\[[0-?]*[ -/]*[@-~]|\u009b[0-?]*[ -/]*[@-~]|[\u001b][\]PX^_][\s\S]*?(?:\u0007|\u001b\\|$)|[\u009d\u0090\u0098\u009e\u009f][\s\S]*?(?:\u0007|\u009c|$)|\u001b[@-Z\\-_]/g;
/** Every C0 and C1 control, DEL, and the bidirectional overrides that reorder what a reader sees; tab and newline apart. */
// eslint-disable-next-line no-control-regex
const CONTROL = /[\u0000-\u0008\u000b-\u001f\u007f-\u009f\u202a-\u202e\u2066-\u2069]/g;
// eslint-disable-next-line no-control-regex
const CONTROL_OR_NEWLINE = /[\u0000-\u0008\u000a-\u001f\u007f-\u009f\u202a-\u202e\u2066-\u2069]/g;

/**
 * Removes terminal sequences, then every control character but tab (and
 * newline, unless `keepNewlines` is `false`). The second pass is what makes it safe: a
 * sequence split so that removing one rebuilds another (`ESC ESC[0m]52;…`)
 * loses its ESC there.
 */
export function stripControls(text: string, { keepNewlines = true }: { readonly keepNewlines?: boolean } = {}): string {
  return text.replace(SEQUENCE, '').replace(keepNewlines ? CONTROL : CONTROL_OR_NEWLINE, '');
}

const PICTURES = '␀␁␂␃␄␅␆␇␈␉␊␋␌␍␎␏␐␑␒␓␔␕␖␗␘␙␚␛␜␝␞␟';

function visible(char: string): string {
  const code = char.charCodeAt(0);
  if (code < 0x20) return PICTURES[code]!;
  if (code === 0x7f) return '␡';
  return `\\u${code.toString(16).padStart(4, '0')}`;
}

/**
 * Shows every control character as a visible stand-in (`␛`, `␇`, `\u009b`)
 * instead of letting a terminal act on it: what a person reads is what was
 * sent. Tab is kept, and newline with `keepNewlines`.
 */
export function showControls(text: string, { keepNewlines = false }: { readonly keepNewlines?: boolean } = {}): string {
  return text.replace(keepNewlines ? CONTROL : CONTROL_OR_NEWLINE, visible);
}
