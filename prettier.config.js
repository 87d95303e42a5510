// Prettier: `npm run format` rewrites, `npm run format:check` (run by CI) only reports.
// Chosen to match the code as it was written by hand: 2 spaces, semicolons, single quotes (double in
// JSX), trailing commas, and lines up to 150 columns. Of the widths tried (100 to 180), 150 changes the
// fewest existing lines of code.
/** @type {import('prettier').Config} */
export default {
  printWidth: 150,
  tabWidth: 2,
  semi: true,
  singleQuote: true,
  jsxSingleQuote: false,
  trailingComma: 'all',
  arrowParens: 'always',
  endOfLine: 'lf',
};
