import { testFormat } from '../support/format-conformance.js';
import { ANTHROPIC } from '../support/format-descriptors.js';

testFormat(ANTHROPIC);
