"""Tests of typed_figures.py on the figures issue 81 found typed by hand at a3681e1, and on what is not a figure.

usage: python3 -m unittest benchmarks/typed_figures_test.py   (run by `cargo test`: docs_tests.rs)
"""
import os
import sys
import unittest

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from typed_figures import typed  # noqa: E402

# Lines of a3681e1, as they were.
RIGS_TOML_37 = ("- open loop (`rate` > 0): 10,000 records/s (a thirteenth of what the consumers drain here at 10 µs, "
                "~130,000/s)")
LAKEHOUSE_204 = ("(`trace_search_groups`); the unbounded lookup went from 7.8 ms to 12.0 ms with it, about the seed's "
                 "11.3 ms.\nSetting the scan's concurrency limit to 64 (from the 2 cores) left it at 10.4 ms.")
LAKEHOUSE_207 = "planning, which is 91% of the time; the seed's indexed lookup (6.6 ms) is 59% of its unbounded one, ours 93%."
RESULTS_931 = ("- Open loop: the README's open-loop paragraph of 2026-12-04 said the Kafka open loop's `split` against "
               "`perthread` `improved` on p99 by 26% with p99 32 ms and 20 ms: `results/kafka_topology.jsonl` holds "
               "x0.892\n  (11%) and p99 20.7 ms and 17.3 ms, which the guide now generates.")


def figures(problems):
    """The figures the problems name, in order."""
    return [p.split("`")[1] for p in problems if "typed by hand" in p or "a past figure" in p]


class Found(unittest.TestCase):
    def test_each_hand_typed_figure_of_a3681e1_is_named(self):
        self.assertEqual(figures(typed(RIGS_TOML_37, "rigs.toml")), ["10 µs", "~130,000/s"])
        self.assertEqual(figures(typed(LAKEHOUSE_204, "lakehouse.md")), ["7.8 ms", "12.0 ms", "11.3 ms", "10.4 ms"])
        self.assertEqual(figures(typed(LAKEHOUSE_207, "lakehouse.md")), ["91%", "6.6 ms", "59%", "93%"])

    def test_a_past_log_may_not_say_what_a_committed_file_holds(self):
        text = "## History\n<!-- past: 2026-12-04 (a log) -->\n\n" + RESULTS_931 + "\n"
        self.assertEqual(figures(typed(text, "README.md", files=["kafka_topology.jsonl"])),
                         ["26%", "32 ms", "20 ms", "x0.892", "11%", "20.7 ms", "17.3 ms"])
        told = "## History\n<!-- past: 2026-12-04 (a log) -->\n\nOn 2026-12-04 the p99 read 32 ms and 20 ms.\n"
        self.assertEqual(typed(told, "README.md", files=["kafka_topology.jsonl"]), [])

    def test_a_range_and_a_signed_change_are_figures(self):
        self.assertEqual(figures(typed("in 13-19 s each, and -4.80% or +5.2%", "a.md")), ["13-19 s", "-4.80%", "+5.2%"])


class Declared(unittest.TestCase):
    def test_a_generated_span_a_given_and_a_past_paragraph_pass(self):
        text = ("# A\n<!-- given: 10 µs (the work per record) -->\n\nAt 10 µs of work, "
                "<!-- fig:kafka -->194,336/s<!-- /fig -->.\n\n"
                "<!-- past: 2026-12-06 (an A/A run once) -->On 2026-12-06 it read x0.956 in 25 s.\n")
        self.assertEqual(typed(text, "a.md"), [])

    def test_a_given_is_of_its_own_section(self):
        text = "# A\n<!-- given: 250 ms (a window) -->\n\n250 ms.\n\n# B\n\n250 ms.\n"
        self.assertEqual(figures(typed(text, "a.md")), ["250 ms"])

    def test_a_past_paragraph_does_not_cover_the_next(self):
        text = "<!-- past: 2026-12-06 (a run) -->On 2026-12-06: 25 s.\n\nToday: 12.6 s.\n"
        self.assertEqual(figures(typed(text, "a.md")), ["12.6 s"])

    def test_a_past_section_covers_the_sections_below_it_and_no_more(self):
        text = ("## Log\n<!-- past: 2026-12-06 (a log) -->\n\nOn 2026-12-06.\n\n### Then\n\n25 s.\n\n"
                "## Now\n\n12.6 s.\n")
        self.assertEqual(figures(typed(text, "a.md")), ["12.6 s"])


class Refused(unittest.TestCase):
    def test_a_given_without_why_unused_or_a_past_without_its_date(self):
        self.assertIn("says no why", typed("<!-- given: 250 ms -->\n\n250 ms\n", "a.md")[0])
        self.assertIn("is not in its section's text", typed("<!-- given: 250 ms (a window) -->\n\nnone\n", "a.md")[0])
        self.assertIn("does not say that date",
                      typed("<!-- past: 2026-12-06 (a run) -->It read 25 s.\n", "a.md")[0])


class NotFigures(unittest.TestCase):
    def test_code_comments_names_and_counts_are_not_figures(self):
        text = ("Issue 81 ran 5 samples on x86 in 40 of 40 comparisons, `--threshold 3%` and `x1.5` in code.\n\n"
                "```\nbenchhost run --measurement 3s # 250 ms\n```\n<!-- 25 s -->\n[a link](results.md#p99-20ms)\n")
        self.assertEqual(typed(text, "a.md"), [])

    def test_a_declaration_shown_as_code_declares_nothing(self):
        text = "Declare it: `<!-- given: 250 ms (a window) -->`. It read 250 ms.\n"
        self.assertEqual(figures(typed(text, "a.md")), ["250 ms"])


if __name__ == "__main__":
    unittest.main()
