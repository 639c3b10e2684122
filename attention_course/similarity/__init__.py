"""Which submissions of a class share their code: normalised, fingerprinted, weighed by rarity."""
