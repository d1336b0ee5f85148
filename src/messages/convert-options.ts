/** Options of `convertMessages`. */
export interface ConvertOptions {
  /**
   * Leave out the reasoning no other provider can take, instead of refusing it: Anthropic
   * `thinking` and `redacted_thinking` blocks (to the OpenAI formats and Gemini), Gemini thought
   * parts and thought signatures (to any other format), and Responses `reasoning` items (to any
   * other format). An assistant or model turn left with
   * nothing goes too. Their signature or encrypted data cannot go across; pass this when the
   * reasoning of earlier turns need not be sent, e.g. a conversation handed to another provider
   * (the view does). Default `false`: they are listed in the `not_convertible` error with the other
   * parts that cannot go across.
   */
  dropThinking?: boolean;
}
