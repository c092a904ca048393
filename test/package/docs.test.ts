// The API reference: TypeDoc reads every entry of the package (typedoc.json, as `npm run docs` does) without a
// warning, and every export carries a doc comment, as does every member of an exported class or interface.
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import {
  Application,
  DeclarationReflection,
  Logger,
  LogLevel,
  ReflectionKind,
  type ProjectReflection,
  type Reflection,
} from 'typedoc';
import { beforeAll, describe, expect, it } from 'vitest';

const root = fileURLToPath(new URL('../../', import.meta.url));

/** TypeDoc's warnings and errors, kept rather than printed. */
class Kept extends Logger {
  readonly messages: string[] = [];
  override log(message: string, level: LogLevel): void {
    if (level >= LogLevel.Warn) this.messages.push(message);
  }
}

/** The members of a class or interface that must say what they are. */
const MEMBER = ReflectionKind.Property | ReflectionKind.Method | ReflectionKind.Accessor;

/** Whether a reflection must carry a doc comment: an export of an entry, or a member of an exported class or interface. */
function mustBeDocumented(reflection: DeclarationReflection): boolean {
  const parent = reflection.parent;
  if (parent === undefined || reflection.kindOf(ReflectionKind.Reference)) return false;
  if (parent.kindOf(ReflectionKind.Module)) return true;
  return parent.kindOf(ReflectionKind.ClassOrInterface) && reflection.kindOf(MEMBER);
}

/** A comment on the reflection, or on each of its signatures (a function's comment is its signatures'). */
function isDocumented(reflection: DeclarationReflection): boolean {
  if (reflection.hasComment()) return true;
  const signatures = [
    ...(reflection.signatures ?? []),
    ...(reflection.getSignature ? [reflection.getSignature] : []),
    ...(reflection.setSignature ? [reflection.setSignature] : []),
  ];
  return signatures.length > 0 && signatures.every((signature) => signature.hasComment());
}

/** Where a reflection is declared, as `file:line`. */
const sourceOf = (reflection: Reflection) => {
  const source = (reflection as DeclarationReflection).sources?.[0];
  return source === undefined ? 'no source' : `${source.fileName}:${source.line}`;
};

describe('the API reference (typedoc.json)', () => {
  let kept: Kept;
  let project: ProjectReflection;

  beforeAll(async () => {
    const app = await Application.bootstrap({ options: join(root, 'typedoc.json') });
    kept = new Kept();
    app.logger = kept;
    const converted = await app.convert();
    if (converted === undefined) throw new Error(`TypeDoc could not convert the entries:\n${kept.messages.join('\n')}`);
    project = converted;
    app.validate(project);
  }, 240_000);

  it('holds every entry of package.json "exports", and TypeDoc reads them without a warning', () => {
    expect(project.children?.map((entry) => entry.name).sort()).toEqual([
      'evosci-rx',
      'evosci-rx/events',
      'evosci-rx/flow',
      'evosci-rx/jetstream',
      'evosci-rx/operators',
      'evosci-rx/otel',
      'evosci-rx/runs',
      'evosci-rx/testing',
      'evosci-rx/viewer',
    ]);
    expect(kept.messages).toEqual([]);
  });

  it('documents every export, and every member of an exported class or interface', () => {
    const undocumented = new Map<string, string>();
    for (const reflection of Object.values(project.reflections)) {
      if (!(reflection instanceof DeclarationReflection)) continue;
      if (!mustBeDocumented(reflection) || isDocumented(reflection)) continue;
      // One line per declaration: an export re-exported by several entries is one fault. What a class inherits
      // from the platform (`Error`'s `message`, `stack`…) is documented there.
      const where = sourceOf(reflection);
      if (where.startsWith('node_modules/')) continue;
      if (!undocumented.has(where)) undocumented.set(where, `${where} ${reflection.getFriendlyFullName()}`);
    }
    expect([...undocumented.values()].sort()).toEqual([]);
  });
});
