"""``caliper tune``: improve a skill's description against measured activation.

* :mod:`.probes` reads probe sets (prompts with the activation they should cause);
* :mod:`.split` splits them into train and test, seeded and stratified;
* :mod:`.description` reads, checks and rewrites a ``SKILL.md`` description;
* :mod:`.measure` measures one description on some probes through ordinary caliper runs;
* :mod:`.proposer` asks a model for revised descriptions;
* :mod:`.loop` ties these together and decides, with the statistics of
  :mod:`caliper.results.significance`, whether a candidate really beats the incumbent;
* :mod:`.importer` converts Anthropic skill-creator's eval files.

``docs/tuning.md`` describes the whole thing for users.
"""
