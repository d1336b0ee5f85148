import { testFormat } from '../support/format-conformance.js';
import { OPENAI_RESPONSES } from '../support/format-descriptors.js';

testFormat(OPENAI_RESPONSES);
