/** The document builder, for what writes the committed copy the typed client is generated from (libs/client). */
export { API_VERSION } from './api-docs.controller.ts';
export { type OpenApiDocument, openApiDocument } from './openapi-document.ts';
