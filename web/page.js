// Classifies the typed text with MediaPipe Tasks' TextClassifier and shows the label, the
// probabilities and how long each call took. The model is `model.tflite` next to this page, another
// URL given as `?model=...`, or a file the user picks. Each call's row in the table carries the
// unrounded scores (data-scores, in the model's label order) and latency, for tests and benchmarks.
// A text is cut at MAX_TEXT_CHARACTERS (MediaPipe reads at most the model's sequence length of it
// anyway, but tokenizes all of it first: a 10 MB text froze the page for half a minute), and the
// table keeps the first HISTORY_TEXT_CHARACTERS of the last HISTORY_ROWS texts.
import {FilesetResolver, TextClassifier} from "@mediapipe/tasks-text";

const WASM_DIR = new URL("node_modules/@mediapipe/tasks-text/wasm", import.meta.url).href;
const MAX_TEXT_CHARACTERS = 10000;  // 20 per token of a 512-token model: more than SentencePiece's pieces of text
const HISTORY_ROWS = 100;
const HISTORY_TEXT_CHARACTERS = 200;

const page = {
  body: document.body,
  status: document.getElementById("status"),
  form: document.getElementById("classify-form"),
  text: document.getElementById("text"),
  button: document.getElementById("classify"),
  modelFile: document.getElementById("model-file"),
  result: document.getElementById("result"),
  label: document.getElementById("result-label"),
  probability: document.getElementById("result-probability"),
  latency: document.getElementById("result-latency"),
  categories: document.getElementById("result-categories"),
  historySection: document.getElementById("history-section"),
  history: document.getElementById("history"),
  cut: document.getElementById("text-cut"),
};
page.text.maxLength = MAX_TEXT_CHARACTERS;
page.cut.textContent = `Texts are cut at ${MAX_TEXT_CHARACTERS.toLocaleString("en")} characters, more than the model reads.`;

let classifier = null;
let classifierName = "";
let calls = 0;

function milliseconds(value) {
  return `${value.toFixed(value < 10 ? 2 : 0)} ms`;
}

function categoryName(category) {
  return category.categoryName || category.displayName || `label ${category.index}`;
}

function firstLine(error) {
  // MediaPipe appends its C++ source trace; the first line says what went wrong.
  return String(error.message ?? error).split("\n")[0].replace(/\.?$/, ".");
}

function setState(state, message) {
  page.body.dataset.state = state;
  page.status.textContent = message;
  const ready = state === "ready";
  page.text.disabled = !ready;
  page.button.disabled = !ready;
}

async function load(fileset, modelAsset, modelName) {
  setState("loading", `Loading ${modelName}…`);
  const started = performance.now();
  classifier?.close();
  classifier = null;
  classifier = await TextClassifier.createFromOptions(fileset, {
    baseOptions: {...modelAsset, delegate: "CPU"},
    maxResults: -1,
  });
  classifierName = modelName;
  return performance.now() - started;
}

function notProbabilities(categories) {
  // MediaPipe reports any model's output as scores, an embedder's too: only probabilities are shown here.
  const scores = categories.map((category) => category.score);
  const sum = scores.reduce((total, score) => total + score, 0);
  if (scores.every((score) => score >= 0 && score <= 1) && Math.abs(sum - 1) <= 1e-3) return null;
  return `its ${scores.length} outputs are not probabilities (from ${Math.min(...scores).toFixed(3)} to ` +
         `${Math.max(...scores).toFixed(3)}, sum ${sum.toFixed(3)}): not a classifier (an embedder?).`;
}

function showResult(text, categories, latencyMs) {
  const best = categories[0];
  page.label.textContent = categoryName(best);
  page.probability.textContent = `probability ${best.score.toFixed(4)}`;
  page.latency.textContent = milliseconds(latencyMs);
  page.categories.replaceChildren(...categories.map((category) => {
    const item = document.createElement("li");
    const bar = document.createElement("span");
    bar.className = "bar";
    bar.append(Object.assign(document.createElement("span"), {style: `width: ${(100 * category.score).toFixed(1)}%`}));
    item.append(Object.assign(document.createElement("span"), {textContent: categoryName(category)}), bar,
                Object.assign(document.createElement("span"), {className: "score", textContent: category.score.toFixed(4)}));
    return item;
  }));
  page.result.hidden = false;

  const scores = [];
  for (const category of categories) scores[category.index] = category.score;
  const row = document.createElement("tr");
  row.dataset.scores = JSON.stringify(scores);
  row.dataset.labels = JSON.stringify(categories.slice().sort((a, b) => a.index - b.index).map(categoryName));
  row.dataset.latencyMs = String(latencyMs);
  const shown = text.length > HISTORY_TEXT_CHARACTERS ? `${text.slice(0, HISTORY_TEXT_CHARACTERS)}…` : text;
  for (const cell of [String(++calls), shown, categoryName(best), best.score.toFixed(4), milliseconds(latencyMs)]) {
    row.append(Object.assign(document.createElement("td"), {textContent: cell}));
  }
  page.history.prepend(row);
  while (page.history.rows.length > HISTORY_ROWS) page.history.lastElementChild.remove();
  page.historySection.hidden = false;
}

function nextPaint() {
  return new Promise((resolve) => requestAnimationFrame(() => setTimeout(resolve, 0)));
}

async function classify(event) {
  event.preventDefault();
  if (page.body.dataset.state !== "ready") return;
  const text = page.text.value.slice(0, MAX_TEXT_CHARACTERS);  // maxlength bounds typing, not a script's value
  const readyMessage = page.status.textContent;
  setState("working", `Classifying ${text.length.toLocaleString("en")} characters…`);
  await nextPaint();  // the status is on screen before the call holds the page
  try {
    const started = performance.now();
    const categories = classifier.classify(text).classifications[0].categories;
    const latencyMs = performance.now() - started;
    const refusal = notProbabilities(categories);
    if (refusal) {
      classifier.close();
      classifier = null;
      setState("error", `Cannot use ${classifierName}: ${refusal} ${METADATA_HINT}`);
      return;
    }
    showResult(text, categories, latencyMs);
    setState("ready", readyMessage);
  } catch (error) {
    setState("ready", `Could not classify this text: ${firstLine(error)}`);
  }
}

const METADATA_HINT = "It must be a classifier .tflite with MediaPipe metadata (see docs/on_device.md).";
const fileset = FilesetResolver.forTextTasks(WASM_DIR);

async function loadFailure(error, modelName) {
  // MediaPipe's own files missing (a half-installed web/node_modules) fail the load as a model would,
  // with an error Event ("[object Event]"): they are checked before the model is blamed.
  const {wasmLoaderPath, wasmBinaryPath} = await fileset;
  for (const path of [wasmLoaderPath, wasmBinaryPath]) {
    const found = await fetch(path, {method: "HEAD"}).then((response) => response.ok, () => false);
    if (!found) {
      return `Could not load MediaPipe's WebAssembly: ${new URL(path).pathname} is missing (web/node_modules is ` +
             "half installed; run bash web/install_browser.sh).";
    }
  }
  return `Could not load ${modelName}: ${firstLine(error)} ${METADATA_HINT}`;
}

async function loadModelUrl() {
  const modelUrl = new URLSearchParams(location.search).get("model") || "model.tflite";
  try {
    const modelMs = await load(await fileset, {modelAssetPath: modelUrl}, modelUrl);
    const readyMs = performance.now();
    const documentMs = performance.getEntriesByType("navigation")[0].domContentLoadedEventEnd;
    page.body.dataset.readyMs = String(readyMs);
    page.body.dataset.documentMs = String(documentMs);
    setState("ready", `Ready ${milliseconds(readyMs)} after the page was opened: the page itself in ` +
             `${milliseconds(documentMs)}, MediaPipe's WebAssembly and ${modelUrl} in ${milliseconds(modelMs)}.`);
    page.text.focus();
  } catch (error) {
    setState("error", await loadFailure(error, modelUrl));
  }
}

async function loadModelFile() {
  const file = page.modelFile.files[0];
  try {
    const buffer = new Uint8Array(await file.arrayBuffer());
    const ms = await load(await fileset, {modelAssetBuffer: buffer}, file.name);
    setState("ready", `Ready: ${file.name} loaded in ${milliseconds(ms)}.`);
  } catch (error) {
    setState("error", await loadFailure(error, file.name));
  }
}

page.form.addEventListener("submit", classify);
page.modelFile.addEventListener("change", loadModelFile);
page.text.addEventListener("keydown", (event) => {
  if (event.key === "Enter" && !event.shiftKey) {
    event.preventDefault();  // Enter classifies; Shift+Enter starts a new line
    page.form.requestSubmit();
  }
});
loadModelUrl();
