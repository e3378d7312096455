export { CatalogReader, type ServerAvailability } from './catalog-reader.ts';
export { modelToolName } from './tool-names.ts';
