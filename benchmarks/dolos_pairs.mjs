// Dolos (@dodona/dolos-lib) on a class's files: every pair's similarity, as JSON on stdout.
//
//     node dolos_pairs.mjs DOLOS_LIB TEMPLATE FILE...
//
// DOLOS_LIB: the package's folder (node_modules/@dodona/dolos-lib); TEMPLATE: a file whose code
// every student was given ("" for none), which Dolos ignores; FILE...: one file per student.
// Dolos's own defaults otherwise (k-grams of 23 tokens, windows of 17). Pairs Dolos does not
// list share nothing (similarity 0).
import path from "node:path";
import { pathToFileURL } from "node:url";

const [lib, template, ...files] = process.argv.slice(2);
const { Dolos } = await import(pathToFileURL(path.join(lib, "dist", "index.js")).href);
const dolos = new Dolos({ language: "python" });
const report = await dolos.analyzePaths(files, template || undefined);
const pairs = report.allPairs().map((p) => ({
  a: p.leftFile.path,
  b: p.rightFile.path,
  similarity: p.similarity,
}));
process.stdout.write(JSON.stringify(pairs));
