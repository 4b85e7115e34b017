"""Work that replays saved or scripted attempts instead of running an agent: ``validate
--probe`` (a spec's checks against no agent at all) and ``regrade`` (new checks on saved runs)."""
