/**
 * The TypeORM DataSource for the TypeORM CLI (`typeorm migration:generate`, `migration:show`).
 * The app and `openbot migrate` build the same DataSource through createDataSource.
 */
import { createDataSource } from './libs/features/src/features';
import { MIGRATIONS } from './migrations';

const url = process.env.DATABASE_URL;
if (url === undefined || url === '') throw new Error('DATABASE_URL must be set for the TypeORM CLI');

export default createDataSource({ url, migrations: MIGRATIONS });
