"""What an episode earned: grading in a fresh sandbox, the rules and the judge's verdicts, reward
synthesis, execution durations for duration-aware weights, and exact replay of recorded episodes."""
