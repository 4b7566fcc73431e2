import { Body, Controller, Delete, Get, Headers, HttpCode, Inject, Param, Post, Query } from '@nestjs/common';
import { CommandBus, QueryBus } from '@nestjs/cqrs';
import { ApiAcceptedResponse, ApiBearerAuth, ApiHeader, ApiOkResponse, ApiOperation, ApiTags } from '@nestjs/swagger';
import { parsePageRequest, type MemberCaller } from '@openbot/domain';
import { DeleteChat, ListMessages, PostMessage, PostToolOutput, StopChat } from '@openbot/features';
import { Access, CurrentMember, Requires } from '../auth/access.decorator';
import { ApiErrors, ApiOrganizationRateLimited } from '../errors/api-errors.decorator';
import { commandKeyOf } from '../validation/command-key';
import { ApiPageQuery } from '../openapi/page-query';
import {
  ChatDeleteBody,
  ChatStopBody,
  MessageAdmissionBody,
  MessagePage,
  PostMessageRequest,
  PostToolOutputRequest,
  toMessageBody,
  ToolOutputAcceptedBody,
} from './message.dto';

@ApiTags('chats')
@ApiBearerAuth()
@Access('member')
@Controller('v1/chats/:id')
export class ChatMessagesController {
  constructor(
    @Inject(CommandBus) private readonly commands: CommandBus,
    @Inject(QueryBus) private readonly queries: QueryBus,
  ) {}

  @Post('messages')
  @Requires('chats.write')
  @HttpCode(202)
  @ApiOperation({
    summary: 'Send a message: start, queue or steer a Turn',
    description:
      'A command (EXE-02): with `Idempotency-Key`, the same key and body answer the same ids, also while the first request is in flight; ' +
      'the same key with another body answers 409 CommandKeyConflict. Keys are scoped to the caller and the Chat. ' +
      'One Turn advances at a time: input of the caller whose Turn runs steers it, any other input queues in order.',
  })
  @ApiHeader({ name: 'Idempotency-Key', required: false, description: '1 to 200 visible ASCII characters' })
  @ApiAcceptedResponse({ type: MessageAdmissionBody })
  // Above ApiErrors: applied after it, so its body schema (with `limit`) is the 429's.
  @ApiOrganizationRateLimited(
    'a rate limit of the organization has no model call left, the Chat has `queuedTurnsPerChat` Turns queued, or the organization has `runningTurns` Turns running',
  )
  @ApiErrors(400, 401, 402, 403, 404, 409, 429)
  async post(
    @CurrentMember() caller: MemberCaller,
    @Param('id') id: string,
    @Body() body: PostMessageRequest,
    // The whole header map: a named @Headers() would add a second, required header to the document.
    @Headers() headers: Record<string, string | undefined>,
  ): Promise<MessageAdmissionBody> {
    return this.commands.execute(new PostMessage(caller, id, body.content, commandKeyOf(headers), body.fileIds ?? []));
  }

  @Get('messages')
  @Requires('chats.read')
  @ApiOperation({
    summary: "List a Chat's messages, oldest first",
    description:
      "A Turn's assistant and tool messages appear when the Turn ends: they commit with its end, before `execution.ended` is published. " +
      'A Turn a limit stopped ends with its partial reply, an assistant message whose `stop` names the limit.',
  })
  @ApiPageQuery()
  @ApiOkResponse({ type: MessagePage })
  @ApiErrors(400, 401, 403, 404)
  async list(@CurrentMember() caller: MemberCaller, @Param('id') id: string, @Query('after') after?: string, @Query('limit') limit?: string): Promise<MessagePage> {
    const page = await this.queries.execute(new ListMessages(caller, id, parsePageRequest(after, limit)));
    return { data: page.data.map(toMessageBody), next: page.next };
  }

  @Post('tool-outputs')
  @Requires('chats.write')
  @HttpCode(202)
  @ApiOperation({
    summary: 'Answer a client tool call a Turn waits on',
    description:
      'The output is saved once, then the Turn wakes and continues under its actor\'s identity. Only the Turn\'s actor (the member whose message ' +
      'started it), an owner or an admin may answer (403 otherwise). The same output again is accepted; another one is 409 ToolCallAnswered.',
  })
  @ApiAcceptedResponse({ type: ToolOutputAcceptedBody })
  @ApiErrors(400, 401, 403, 404, 409)
  async toolOutput(@CurrentMember() caller: MemberCaller, @Param('id') id: string, @Body() body: PostToolOutputRequest): Promise<ToolOutputAcceptedBody> {
    return this.commands.execute(new PostToolOutput(caller, id, body.callId, body.output, body.isError ?? false, body.fileIds ?? []));
  }

  @Post('stop')
  @Requires('chats.write')
  @HttpCode(202)
  @ApiOperation({ summary: "Stop the Chat's running and queued Turns (cancel commands; the Chat stays open)" })
  @ApiAcceptedResponse({ type: ChatStopBody })
  @ApiErrors(401, 403, 404)
  async stop(@CurrentMember() caller: MemberCaller, @Param('id') id: string): Promise<ChatStopBody> {
    const stopped = await this.commands.execute(new StopChat(caller, id));
    return { executionIds: [...stopped.executionIds] };
  }

  @Delete()
  @Requires('chats.write')
  @HttpCode(202)
  @ApiOperation({
    summary: 'Delete a Chat',
    description: 'Admission closes at once (the Chat answers 404 from then on); a `chat.delete` execution cancels its Turns, waits for their release and removes it.',
  })
  @ApiAcceptedResponse({ type: ChatDeleteBody })
  @ApiErrors(401, 403, 404)
  async delete(@CurrentMember() caller: MemberCaller, @Param('id') id: string): Promise<ChatDeleteBody> {
    return this.commands.execute(new DeleteChat(caller, id));
  }
}
