"""A run's or a formula's report, as `memsim run --json` / `memsim formula --json` write it."""

from __future__ import annotations

import copy
from typing import Any

from . import _show


class Result:
    """One report. ``to_dict()`` is the JSON report itself (identical keys and numbers);
    the attributes are the parts a lab asks for most.

    dram_bytes  the DRAM bytes read and written (the final flush included unless the run
                was made with flush=False); for formula(), the exact formula's prediction
    arrays      per array: DRAM bytes read, written, ... (formula(): the exact formula's)
    phases      per phase (formula(): empty)
    formulas    the lab and exact formulas with their comparison to the run
    flops, intensity   FLOPs of the kernel, FLOP per DRAM byte
    text        the text report the command line prints

    In a notebook it shows itself as tables (DRAM bytes, per array, the formulas' verdicts);
    plot() draws each array's DRAM bytes (matplotlib).
    """

    def __init__(self, report: dict[str, Any], text: str = "") -> None:
        self._report = report
        self.text = text

    @property
    def measured(self) -> bool:
        """True for a simulated run, False for formula()'s predictions."""
        return "dram" in self._report

    @property
    def dram_bytes(self) -> int:
        if self.measured:
            return self._report["dram"]["total_bytes"]
        return self._report["formulas"]["exact"]["bytes"]

    @property
    def arrays(self) -> dict[str, Any]:
        if self.measured:
            return self._report.get("arrays", {})
        return self._report["formulas"]["exact"].get("arrays", {})

    @property
    def phases(self) -> dict[str, Any]:
        return self._report.get("phases", {})

    @property
    def formulas(self) -> dict[str, Any]:
        return self._report.get("formulas", {})

    @property
    def config(self) -> dict[str, Any]:
        return self._report.get("config", {})

    @property
    def flops(self) -> float | None:
        return self._report.get("flops")

    @property
    def intensity(self) -> float | None:
        return self._report.get("intensity")

    def __getitem__(self, key):
        return self._report[key]

    def __contains__(self, key):
        return key in self._report

    def to_dict(self) -> dict[str, Any]:
        """The whole report (a copy)."""
        return copy.deepcopy(self._report)

    def __repr__(self):
        c = self.config
        what = "run" if self.measured else "formula"
        return (f"<memsim {what} {c.get('kernel')} N={c.get('N')} d={c.get('d')} "
                f"cache={c.get('cache')!r}: {self.dram_bytes} DRAM bytes>")

    def _repr_html_(self) -> str:
        return _show.report_html(self._report)

    def plot(self, ax=None):
        """Bars of each array's DRAM bytes, read and written (formula(): the exact formula's).
        Returns the matplotlib axes; Error without matplotlib."""
        return _show.report_plot(self._report, ax)
