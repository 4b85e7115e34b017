"""One attempt, step by step: its sandbox and installed skills, the agent, the judges, the
forbidden-read check, retries after transient failures, and the kept working folder."""
