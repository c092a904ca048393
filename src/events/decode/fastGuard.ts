import type * as t from 'io-ts';

/** A type guard, as `codec.is` but quicker. */
export type Guard = (value: unknown) => boolean;

/** A JSON object: what `JSON.parse` gives for `{…}` (io-ts asks `Object.prototype.toString`, which is slower). */
function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

interface Node {
  readonly _tag?: string;
  readonly value?: unknown;
  readonly type?: t.Mixed;
  readonly types?: readonly t.Mixed[];
  readonly props?: Readonly<Record<string, t.Mixed>>;
}

// How a field is checked: the kinds most fields are, tested in place; any other by its guard.
const BY_GUARD = 0;
const STRING = 1;
const NUMBER = 2;
const BOOLEAN = 3;
const LITERAL = 4;
const RECORD = 5;

const KINDS: Readonly<Record<string, number>> = {
  StringType: STRING,
  NumberType: NUMBER,
  BooleanType: BOOLEAN,
  LiteralType: LITERAL,
  UnknownRecordType: RECORD,
};

/** The fields an object must have, flattened from an interface, a partial, or an intersection of them. */
interface Shape {
  readonly keys: string[];
  readonly kinds: number[];
  /** The literal of a `LITERAL` field, the guard of a `BY_GUARD` one. */
  readonly operands: unknown[];
  readonly optional: boolean[];
}

/**
 * The fields of `node` as one shape, or `undefined` when it is not an
 * object of fields. An intersection's fields are its members' fields one
 * after the other: a key in two members is checked against both.
 */
function shapeOf(node: Node): Shape | undefined {
  if (node._tag === 'UnknownRecordType') return { keys: [], kinds: [], operands: [], optional: [] };
  if (node._tag === 'InterfaceType' || node._tag === 'PartialType') {
    const shape: Shape = { keys: [], kinds: [], operands: [], optional: [] };
    for (const [key, codec] of Object.entries(node.props!)) {
      const field = codec as unknown as Node;
      const kind = KINDS[field._tag ?? ''] ?? BY_GUARD;
      shape.keys.push(key);
      shape.kinds.push(kind);
      shape.operands.push(kind === LITERAL ? field.value : kind === BY_GUARD ? fastGuard(codec) : undefined);
      shape.optional.push(node._tag === 'PartialType');
    }
    return shape;
  }
  if (node._tag !== 'IntersectionType') return undefined;
  const members = node.types!.map((member) => shapeOf(member as unknown as Node));
  if (members.some((member) => member === undefined)) return undefined;
  return {
    keys: members.flatMap((m) => m!.keys),
    kinds: members.flatMap((m) => m!.kinds),
    operands: members.flatMap((m) => m!.operands),
    optional: members.flatMap((m) => m!.optional),
  };
}

/**
 * One loop over an object's fields, each field's kind tested in place, so
 * that an event costs one call rather than one per field and member. A
 * missing required field fails whatever its type, as io-ts's `is` has it.
 */
function shapeGuard({ keys, kinds, operands, optional }: Shape): Guard {
  const count = keys.length;
  return (u) => {
    if (!isRecord(u)) return false;
    for (let i = 0; i < count; i++) {
      const field = u[keys[i]!];
      if (field === undefined) {
        if (optional[i] === true) continue;
        if (!Object.prototype.hasOwnProperty.call(u, keys[i]!)) return false;
      }
      switch (kinds[i]) {
        case STRING:
          if (typeof field !== 'string') return false;
          break;
        case NUMBER:
          if (typeof field !== 'number') return false;
          break;
        case BOOLEAN:
          if (typeof field !== 'boolean') return false;
          break;
        case LITERAL:
          if (field !== operands[i]) return false;
          break;
        case RECORD:
          if (!isRecord(field)) return false;
          break;
        default:
          if (!(operands[i] as Guard)(field)) return false;
      }
    }
    return true;
  };
}

/**
 * The guard of an io-ts codec, for values parsed from JSON. It accepts
 * exactly what `codec.is` accepts there (a property test holds them side by
 * side) at a fraction of the cost: `is` is the decoder's check of every line,
 * so its cost is paid per event. Codecs of kinds it does not know keep their
 * own `is`.
 */
export function fastGuard(codec: t.Mixed): Guard {
  const node = codec as unknown as Node;
  const shape = shapeOf(node);
  if (shape !== undefined) return node._tag === 'UnknownRecordType' ? isRecord : shapeGuard(shape);
  switch (node._tag) {
    case 'StringType':
      return (u) => typeof u === 'string';
    case 'NumberType':
      return (u) => typeof u === 'number';
    case 'BooleanType':
      return (u) => typeof u === 'boolean';
    case 'UnknownType':
      return () => true;
    case 'LiteralType': {
      const literal = node.value;
      return (u) => u === literal;
    }
    case 'ArrayType': {
      const item = fastGuard(node.type!);
      return (u) => {
        if (!Array.isArray(u)) return false;
        for (const element of u) if (!item(element)) return false;
        return true;
      };
    }
    case 'IntersectionType': {
      const members = node.types!.map(fastGuard);
      return (u) => {
        for (const member of members) if (!member(u)) return false;
        return true;
      };
    }
    case 'UnionType': {
      const members = node.types!.map(fastGuard);
      return (u) => {
        for (const member of members) if (member(u)) return true;
        return false;
      };
    }
    default:
      return (u) => codec.is(u);
  }
}
