"""The agent's environment and the actors in it: the tool protocol (parse, execute, render), the
scripted expert and the model policy, the KV-cache sampler with the tool-call grammar, the
batched rollout engine and the JSONL trajectory records it writes."""
