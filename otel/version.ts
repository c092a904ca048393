// The package's version, as the instrumentation scope of every tracer and meter: a constant, so that the entry,
// which runs in browsers too, reads no file. test/otel/version.test.ts holds it equal to package.json's.
export const VERSION = '0.1.0';
