"""RACE: 4-way multiple-choice reading comprehension (middle- and high-school English exams)."""
