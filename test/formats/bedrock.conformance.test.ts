import { testFormat } from '../support/format-conformance.js';
import { BEDROCK } from '../support/format-descriptors.js';

testFormat(BEDROCK);
