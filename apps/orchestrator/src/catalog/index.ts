export { CatalogReader, type ServerAvailability } from './catalog-reader.ts';
