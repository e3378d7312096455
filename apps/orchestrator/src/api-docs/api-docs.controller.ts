import { Controller, Get, Req, Res } from '@nestjs/common';
import { apiReference } from '@scalar/nestjs-api-reference';
import type { Request, Response } from 'express';
import { WithoutDependencyTimeout } from '../http/dependency-timeout.interceptor.ts';
import { type OpenApiDocument, openApiDocument } from './openapi-document.ts';

export const API_VERSION = '0.1.0';

/** The OpenAPI 3.1 document at /openapi.json and a reference UI (Scalar) over it at /docs. */
@Controller()
@WithoutDependencyTimeout()
export class ApiDocsController {
  private readonly document: OpenApiDocument = openApiDocument(API_VERSION);
  private readonly reference = apiReference({ url: '/openapi.json', title: 'Switchyard API' }) as (
    request: Request,
    response: Response,
  ) => void;

  @Get('openapi.json')
  openApi(): OpenApiDocument {
    return this.document;
  }

  @Get('docs')
  docs(@Req() request: Request, @Res() response: Response): void {
    this.reference(request, response);
  }
}
