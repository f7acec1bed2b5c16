import { z } from 'zod';
import { PLAN_LIMITS } from '../../core/plans.js';
import { ADMIN_TOKEN, ProjectPath, body, defaultError, error, json, type Route } from '../openapi/building-blocks.js';
import { CreateProjectBody, UpdateProjectBody } from '../operator/management.schema.js';
import { ProjectResponse, ProjectWithApiKeyResponse } from './projects.responses.js';

const requestBodies = () => ({
  createProject: body(CreateProjectBody, 'CreateProjectRequest'),
  updateProject: body(
    UpdateProjectBody,
    'UpdateProjectRequest',
    'At least one of `name`, `archived` and `allowedOrigins`. `allowedOrigins` replaces the project’s list of browser origins (exact origins such as `https://app.example.com`; `[]` allows any origin again); see `allowed_origins` of the Project.',
  ),
});

/** Projects of the admin token's account (DESIGN 3). */
export function registerProjectPaths(route: Route) {
  const requests = requestBodies();

  route({
    method: 'post',
    path: '/projects',
    operationId: 'createProject',
    tags: ['Projects'],
    summary: 'Create a project',
    security: ADMIN_TOKEN,
    request: { body: requests.createProject },
    responses: {
      200: json('The project, with its API key (shown only here and on rotation).', ProjectWithApiKeyResponse),
      400: error('Validation failed; the reason names the field.'),
      401: error('Missing or invalid admin token.'),
      402: error(
        `The plan’s project limit is reached (Free ${PLAN_LIMITS.free.maxProjects}, Pro ${PLAN_LIMITS.pro.maxProjects}, Team unlimited).`,
      ),
      default: defaultError,
    },
  });

  route({
    method: 'get',
    path: '/projects',
    operationId: 'listProjects',
    tags: ['Projects'],
    summary: 'List the account’s projects',
    security: ADMIN_TOKEN,
    responses: {
      200: json('The projects, without keys.', z.array(ProjectResponse)),
      401: error('Missing or invalid admin token.'),
      default: defaultError,
    },
  });

  route({
    method: 'get',
    path: '/projects/{id}',
    operationId: 'getProject',
    tags: ['Projects'],
    summary: 'Get a project',
    description: 'Also answers for a suspended project.',
    security: ADMIN_TOKEN,
    request: { params: ProjectPath },
    responses: {
      200: json('The project, without its key.', ProjectResponse),
      401: error('Missing or invalid admin token.'),
      403: error('The project belongs to another account.'),
      404: error('No such project.'),
      default: defaultError,
    },
  });

  route({
    method: 'patch',
    path: '/projects/{id}',
    operationId: 'updateProject',
    tags: ['Projects'],
    summary: 'Rename or archive a project, or restrict its browser origins',
    description: 'An archived project is read-only for feedback: creating items, voting, unvoting and commenting are 403.',
    security: ADMIN_TOKEN,
    request: { params: ProjectPath, body: requests.updateProject },
    responses: {
      200: json('The project, without its key.', ProjectResponse),
      400: error('Validation failed; the reason names the field.'),
      401: error('Missing or invalid admin token.'),
      403: error('The project belongs to another account.'),
      404: error('No such project.'),
      default: defaultError,
    },
  });

  route({
    method: 'post',
    path: '/projects/{id}/api-keys',
    operationId: 'rotateApiKey',
    tags: ['Projects'],
    summary: 'Rotate the project’s API key',
    description: 'The old key stops working at once.',
    security: ADMIN_TOKEN,
    request: { params: ProjectPath },
    responses: {
      200: json('The project with its new API key.', ProjectWithApiKeyResponse),
      401: error('Missing or invalid admin token.'),
      403: error('The project belongs to another account, or is suspended.'),
      404: error('No such project.'),
      default: defaultError,
    },
  });
}
