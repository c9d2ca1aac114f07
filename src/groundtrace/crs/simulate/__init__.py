"""Interactive evaluation (``groundtrace crs simulate``): a rule-based user simulator talks to a system.

* :mod:`.user` — :class:`~.user.SimulatedUser`: a dataset dialogue's persona and hidden constraints; it
  rejects a recommendation that violates them (saying which, as the dataset's reject_and_refine turns do),
  refines, and accepts a satisfying one (optional LLM phrasing);
* :mod:`.loop` — one simulated conversation and its outcome (:class:`~.loop.Transcript`);
* :mod:`.run` — many of them: summary (success, turns to success, recovery, repeats, grounding metrics,
  usage), ``transcripts.jsonl``, ``summary.json``, ``transcripts.html``. docs/crs-simulate.md.
"""

from groundtrace.crs.simulate.run import simulate

__all__ = ["simulate"]
