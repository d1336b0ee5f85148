import { testFormat } from '../support/format-conformance.js';
import { OPENAI_CHAT } from '../support/format-descriptors.js';

testFormat(OPENAI_CHAT);
