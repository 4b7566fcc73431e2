import { Controller, Delete, Get, HttpCode, Inject, Param, Query } from '@nestjs/common';
import { CommandBus, QueryBus } from '@nestjs/cqrs';
import { ApiBearerAuth, ApiOkResponse, ApiOperation, ApiQuery, ApiTags } from '@nestjs/swagger';
import { parsePageRequest, type MemberCaller } from '@openbot/domain';
import { CancelReminder, ListReminders } from '@openbot/features';
import { Access, CurrentMember, Requires } from '../auth/access.decorator';
import { ApiErrors } from '../errors/api-errors.decorator';
import { ApiPageQuery } from '../openapi/page-query';
import { ReminderBody, ReminderPage, toReminderBody } from './reminder.dto';

@ApiTags('reminders')
@ApiBearerAuth()
@Access('member')
@Controller('v1/reminders')
export class RemindersController {
  constructor(
    @Inject(CommandBus) private readonly commands: CommandBus,
    @Inject(QueryBus) private readonly queries: QueryBus,
  ) {}

  @Get()
  @Requires('chats.read')
  @ApiOperation({
    summary: "The organization's reminders, oldest first",
    description:
      "Reminders a Bot's `remind` tool set. Each is durable: when due, its message is posted into its Chat as user-side input (author `reminder`), " +
      'also after a restart. Filter: `chatId`.',
  })
  @ApiPageQuery()
  @ApiQuery({ name: 'chatId', required: false, schema: { type: 'string', format: 'uuid' } })
  @ApiOkResponse({ type: ReminderPage })
  @ApiErrors(400, 401, 403)
  async list(@CurrentMember() caller: MemberCaller, @Query('chatId') chatId?: string, @Query('after') after?: string, @Query('limit') limit?: string): Promise<ReminderPage> {
    const page = await this.queries.execute(new ListReminders(caller, chatId === '' ? undefined : chatId, parsePageRequest(after, limit)));
    return { data: page.data.map(toReminderBody), next: page.next };
  }

  @Delete(':id')
  @Requires('chats.write')
  @HttpCode(200)
  @ApiOperation({
    summary: 'Cancel a reminder',
    description:
      'A pending reminder becomes `cancelled` and is never posted. One already sent or cancelled is answered as it is. ' +
      'Only the member whose Turn set it, an owner or an admin may cancel it: anyone else of the organization gets 403 `Forbidden`, another organization 404.',
  })
  @ApiOkResponse({ type: ReminderBody })
  @ApiErrors(401, 403, 404)
  async cancel(@CurrentMember() caller: MemberCaller, @Param('id') id: string): Promise<ReminderBody> {
    return toReminderBody(await this.commands.execute(new CancelReminder(caller, id)));
  }
}
