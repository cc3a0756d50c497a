"""The known-failure lists of the outside suites (tools/*_suite.py): one
entry a line, a test's name, a space, then why it fails; "#" starts a
comment. A reason starting with "(may pass)" lets the test pass too.
"""

MAY_PASS = "(may pass)"


def load(path):
    """{test: reason} of the failures a suite expects."""
    out = {}
    for line in open(path):
        line = line.strip()
        if line and not line.startswith("#"):
            name, _, why = line.partition(" ")
            out[name] = why.strip()
    return out


class Tally:
    """A suite's verdicts, each test's printed as it comes: ok, known
    (a listed failure), or unexpected (an unlisted failure, or a listed
    one that passes where its reason does not allow it)."""

    def __init__(self, known):
        self.known, self.passed, self.expected, self.unexpected = known, 0, 0, []

    def add(self, name, ok, why, shown=None, took=None):
        """Test `name` passed (`ok`) or failed for `why`; `shown` is how
        its line names it (default: the name), `took` its seconds."""
        shown = shown or name
        time = f" ({took:.1f} s)" if took is not None else ""
        reason = self.known.get(name)
        if ok and reason is not None and not reason.startswith(MAY_PASS):
            self.unexpected.append(f"{shown}: passes, but is listed as a known failure")
            print(f"PASS? {shown}{time}: listed as known ({reason})", flush=True)
        elif ok:
            self.passed += 1
            print(f"ok    {shown}{time}", flush=True)
        elif reason is not None:
            self.expected += 1
            print(f"known {shown}{time}: {reason}", flush=True)
        else:
            self.unexpected.append(f"{shown}: {why}")
            print(f"FAIL  {shown}{time}: {why[:400]}", flush=True)

    def summary(self):
        """Print the counts and every unexpected result; 1 if any."""
        print(f"{self.passed} passed, {self.expected} known failures, {len(self.unexpected)} unexpected")
        for u in self.unexpected:
            print("  " + u)
        return 1 if self.unexpected else 0
