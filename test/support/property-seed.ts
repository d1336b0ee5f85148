/**
 * Replaying a property test's failure: `PROPERTY_SEED=S npm test -- FILE` runs every fast-check
 * property with seed `S` (the seed fast-check printed with the failure), unless the property names
 * its own. `PROPERTY_RUNS=N` (read by each property file) sets how many runs the properties make.
 */
import fc from 'fast-check';

const seed = process.env.PROPERTY_SEED;
if (seed !== undefined && seed !== '') {
  const value = Number(seed);
  if (!Number.isSafeInteger(value)) {
    throw new Error(
      `PROPERTY_SEED must be a whole number (the seed fast-check printed); got ${JSON.stringify(seed)}`,
    );
  }
  fc.configureGlobal({ ...fc.readConfigureGlobal(), seed: value });
}
