import { testFormat } from '../support/format-conformance.js';
import { GEMINI } from '../support/format-descriptors.js';

testFormat(GEMINI);
