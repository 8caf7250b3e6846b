// jest's globalSetup: the run's shared folders (promtool and amtool results, prom-tools-results.js;
// the OpenAPI document, openapi-document.js), made before the workers start so that they and the
// commands they start inherit them.
/* eslint-disable @typescript-eslint/no-require-imports */
const promToolsResults = require('./prom-tools-results');
const openApiDocument = require('./openapi-document');
/* eslint-enable @typescript-eslint/no-require-imports */

module.exports = () => {
  promToolsResults.setup();
  openApiDocument.setup();
};
