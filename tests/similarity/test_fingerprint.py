"""Winnowing's guarantee: any run of k + w - 1 tokens two sequences share gives them a common
fingerprint; and the hashes are the same in every process."""

from __future__ import annotations

import random
import subprocess
import sys

from attention_course.similarity.fingerprint import kgram_hashes, winnow

K, W = 5, 4


def test_a_long_enough_shared_run_always_shares_a_fingerprint():
    rng = random.Random(7)
    words = [f"t{i}" for i in range(30)]
    for _ in range(200):
        run = [rng.choice(words) for _ in range(K + W - 1)]
        a = [rng.choice(words) for _ in range(rng.randrange(0, 40))] + run
        b = run + [rng.choice(words) for _ in range(rng.randrange(0, 40))]
        a += [rng.choice(words) for _ in range(rng.randrange(0, 10))]
        fa, fb = winnow(kgram_hashes(a, K), W), winnow(kgram_hashes(b, K), W)
        assert set(fa) & set(fb), (a, b)


def test_winnowing_keeps_fewer_hashes_than_kgrams_and_only_theirs():
    tokens = [f"t{i % 17}" for i in range(200)]
    hashes = kgram_hashes(tokens, K)
    chosen = winnow(hashes, W)
    assert set(chosen) <= set(hashes) and len(chosen) < len(set(hashes))
    assert all(hashes[p] == h for h, positions in chosen.items() for p in positions)


def test_hashes_do_not_depend_on_the_process():
    code = (
        "from attention_course.similarity.fingerprint import kgram_hashes as k; "
        "print(k('abcdef', 3))"
    )
    runs = {
        subprocess.run(
            [sys.executable, "-c", code],
            capture_output=True,
            text=True,
            check=True,
            env={"PYTHONHASHSEED": seed},
        ).stdout
        for seed in ("1", "2")
    }
    assert len(runs) == 1 and str(kgram_hashes(list("abcdef"), 3)) + "\n" in runs
