"""Learning from logged runs: collect a corpus of real vote loops, read it, fit the simulator to it."""
