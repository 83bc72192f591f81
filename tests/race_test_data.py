"""Small hand-made RACE passages in the official format (RACE itself is not shipped)."""

import json
import os

PASSAGES = [
    {"id": "middle1.txt", "article": "Tom has a red bike. Every morning he rides it to school with his sister Ann.",
     "questions": ["What colour is Tom's bike?", "Tom rides to school with _ ."],
     "options": [["Blue", "Red", "Green", "Black"], ["his father", "his friend", "his sister", "his dog"]],
     "answers": ["B", "C"]},
    {"id": "middle2.txt", "article": "The library opens at nine and closes at five. On Sundays it is closed.",
     "questions": ["When is the library closed?"],
     "options": [["On Mondays", "On Sundays", "At nine", "In the morning"]],
     "answers": ["B"]},
    {"id": "high1.txt", "article": "Glaciers store about sixty-nine percent of the world's fresh water. As the "
                                   "climate warms, many of them are shrinking, which raises sea levels.",
     "questions": ["Why are many glaciers shrinking?", "Glaciers hold most of the world's _ ."],
     "options": [["Because of warming", "Because of fishing", "Because of rain", "Because of ships"],
                 ["salt water", "fresh water", "sand", "oil"]],
     "answers": ["A", "B"]},
]


def write_race(data_dir, layout="files", splits=("train", "dev", "test")):
    """Writes PASSAGES under `<data_dir>/RACE/<split>/<level>/`: one JSON file per passage
    (`layout="files"`, the official download) or the original's one-line-per-passage `all.txt`."""
    for split in splits:
        for level in ("middle", "high"):
            level_dir = os.path.join(data_dir, "RACE", split, level)
            os.makedirs(level_dir, exist_ok=True)
            passages = [p for p in PASSAGES if p["id"].startswith(level)]
            if layout == "all.txt":
                with open(os.path.join(level_dir, "all.txt"), "w") as handle:
                    handle.writelines(json.dumps(p) + "\n" for p in passages)
            else:
                for passage in passages:
                    with open(os.path.join(level_dir, passage["id"]), "w") as handle:
                        json.dump(passage, handle)
    return str(data_dir)
