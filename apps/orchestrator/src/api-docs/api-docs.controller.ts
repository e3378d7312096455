import { Controller, Get, Req, Res } from '@nestjs/common';
import type { Request, Response } from 'express';
import { WithoutDependencyTimeout } from '../http/dependency-timeout.interceptor.ts';
import type { OpenApiDocument } from './openapi-document.ts';

export const API_VERSION = '0.1.0';

type ReferenceHandler = (request: Request, response: Response) => void;

/**
 * The OpenAPI 3.1 document at /openapi.json and a reference UI (Scalar) over it at /docs. Both are
 * built by their first request, not when the replica starts: zod-openapi, the document it builds and
 * Scalar's handler are memory every replica would hold for pages few replicas ever serve
 * (docs/capacity.md). Once built, each is kept.
 */
@Controller()
@WithoutDependencyTimeout()
export class ApiDocsController {
  private document: Promise<OpenApiDocument> | undefined;
  private reference: Promise<ReferenceHandler> | undefined;

  @Get('openapi.json')
  openApi(): Promise<OpenApiDocument> {
    this.document ??= import('./openapi-document.ts').then(({ openApiDocument }) =>
      openApiDocument(API_VERSION),
    );
    return this.document;
  }

  @Get('docs')
  async docs(@Req() request: Request, @Res() response: Response): Promise<void> {
    this.reference ??= import('@scalar/nestjs-api-reference').then(
      ({ apiReference }) =>
        apiReference({ url: '/openapi.json', title: 'Switchyard API' }) as ReferenceHandler,
    );
    (await this.reference)(request, response);
  }
}
